import { Component, type ReactNode } from 'react';

/**
 * Keeps one view's failure in that view: an answer it cannot use is shown as a message with a way back,
 * and the rest of the window (projects, decisions, the pause banner) stays usable.
 */
export class ViewBoundary extends Component<{ children: ReactNode }, { error: string | null }> {
  override state = { error: null as string | null };

  static getDerivedStateFromError(error: Error) {
    return { error: error.message };
  }

  override render() {
    if (this.state.error === null) return this.props.children;
    return (
      <div className="error" role="alert" data-testid="view-error">
        This view could not be shown: {this.state.error}{' '}
        <button onClick={() => this.setState({ error: null })}>Show it again</button>
      </div>
    );
  }
}
