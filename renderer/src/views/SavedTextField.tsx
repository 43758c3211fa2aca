import type { ReactNode } from 'react';

/** A labelled text field with the button that saves it, and what to say about it after the button. */
export function SavedTextField(props: {
  id: string;
  label: string;
  size: number;
  placeholder: string;
  value: string;
  onChange: (value: string) => void;
  canSave: boolean;
  onSave: () => void;
  saveLabel: string;
  children?: ReactNode;
}) {
  return (
    <div className="row">
      <label htmlFor={props.id}>{props.label}</label>
      <input
        id={props.id}
        type="text"
        size={props.size}
        autoComplete="off"
        spellCheck={false}
        placeholder={props.placeholder}
        value={props.value}
        onChange={(e) => props.onChange(e.target.value)}
      />
      <button disabled={!props.canSave} onClick={props.onSave}>
        {props.saveLabel}
      </button>
      {props.children}
    </div>
  );
}
